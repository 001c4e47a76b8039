from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Investigations"

    def ready(self) -> None:
        from agent import checks  # noqa: F401  (checks registers itself)
