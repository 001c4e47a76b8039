from django.apps import AppConfig


class MeasurementConfig(AppConfig):
    """Benchmarks, evaluation, reports and plots: it imports the application, nothing imports it."""

    name = "measurement"
    verbose_name = "Measurement"

    def ready(self) -> None:
        from measurement.evaluation import agent_systems

        agent_systems.register()
