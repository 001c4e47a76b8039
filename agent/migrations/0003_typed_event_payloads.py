# Stored steps take the field names of the typed event catalogue (agent.engine.events):
# a sub-question's end gets its own kind, and document keys are named as keys.

from django.db import migrations

SUBQUESTION_FINISH = ("finish", "subquestion_finish")
RENAMED_FIELDS = {
    "verdict": ("document_id", "document_key"),
    "held_drop": ("document_id", "document_key"),
    "search": ("document_ids", "document_keys"),
    "warm_start": ("document_ids", "document_keys"),
}


def _rename(payload: dict, old: str, new: str) -> bool:
    if old not in payload:
        return False
    payload[new] = payload.pop(old)
    return True


def _in_a_sub_question(Step) -> dict:
    # The envelope column was later renamed (0005); read whichever name this model state has.
    names = {field.name for field in Step._meta.get_fields()}
    column = "subquestion" if "subquestion" in names else "sub_question_index"
    return {f"{column}__isnull": False}


def forwards(apps, schema_editor):
    Step = apps.get_model("agent", "Step")
    old_kind, new_kind = SUBQUESTION_FINISH
    Step.objects.filter(kind=old_kind, **_in_a_sub_question(Step)).update(kind=new_kind)
    for kind, (old, new) in RENAMED_FIELDS.items():
        for step in Step.objects.filter(kind=kind).only("id", "payload").iterator():
            if _rename(step.payload, old, new):
                step.save(update_fields=["payload"])


def backwards(apps, schema_editor):
    Step = apps.get_model("agent", "Step")
    old_kind, new_kind = SUBQUESTION_FINISH
    Step.objects.filter(kind=new_kind).update(kind=old_kind)
    for kind, (old, new) in RENAMED_FIELDS.items():
        for step in Step.objects.filter(kind=kind).only("id", "payload").iterator():
            if _rename(step.payload, new, old):
                step.save(update_fields=["payload"])


class Migration(migrations.Migration):

    dependencies = [
        ("agent", "0002_investigation_policy_choices"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
