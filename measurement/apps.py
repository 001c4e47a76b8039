from django.apps import AppConfig


class MeasurementConfig(AppConfig):
    """Benchmarks, evaluation, reports and plots: it imports the application, nothing imports it."""

    name = "measurement"
    verbose_name = "Measurement"

    def ready(self) -> None:
        # deferred: Django's app loading (the systems import models, ready only once the
        # registry is)
        from measurement.evaluation import agent_systems

        agent_systems.register()
