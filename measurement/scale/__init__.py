"""The scale benchmark: synthetic archives from the demo's sentences, measured per size."""
