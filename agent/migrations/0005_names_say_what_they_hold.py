from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("agent", "0004_review_evidence_prompts_order"),
    ]

    operations = [
        migrations.RenameField(model_name="step", old_name="subquestion",
                               new_name="sub_question_index"),
        migrations.RenameField(model_name="verdict", old_name="subquestion",
                               new_name="sub_question_index"),
        migrations.RenameField(model_name="investigation", old_name="ranked_ids",
                               new_name="ranked_keys"),
        migrations.RenameField(model_name="investigation", old_name="gold_ids",
                               new_name="gold_keys"),
    ]
