"""Typed application keys shared by the http modules."""

from __future__ import annotations

from aiohttp import web

from ..config import Settings
from ..index.live import EmbedWorker
from ..index.memory import Memory
from ..index.service import OracleIndex

settings_key = web.AppKey("settings", Settings)
index_key = web.AppKey("index", OracleIndex)
worker_key = web.AppKey("embed_worker", EmbedWorker)
memory_key = web.AppKey("memory", Memory)
ready_key = web.AppKey("initial_index_done", object)  # an asyncio.Event set after the first reconcile
stopping_key = web.AppKey("stopping", object)  # an asyncio.Event set when the app shuts down
