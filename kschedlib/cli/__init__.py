"""Command-line interface: ``kschedlib simulate``."""
