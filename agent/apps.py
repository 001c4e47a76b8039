from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Investigations"

    def ready(self) -> None:
        # deferred: Django's app loading (models and signals only once the registry is ready).
        # The checks register themselves; Celery's autodiscovery looks for a `tasks` module at an
        # app's top only, so the run task and the worker's sweeper are registered here.
        from agent import checks  # noqa: F401
        from agent.investigations import sweeper, tasks  # noqa: F401
