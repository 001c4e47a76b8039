from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Investigations"

    def ready(self) -> None:
        # The checks register themselves; the tasks module holds the run task and the worker's
        # sweeper, and Celery's autodiscovery looks only for a `tasks` module at an app's top.
        from agent import checks  # noqa: F401
        from agent.investigations import tasks  # noqa: F401
