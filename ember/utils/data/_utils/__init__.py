"""Helpers of ember.utils.data: collation, fetching, and the worker process loop."""
from . import collate, fetch, worker  # noqa: F401
