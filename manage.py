#!/usr/bin/env python
"""Run Django management commands for TRACE."""

import os
import sys

from django.core.management import execute_from_command_line


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
