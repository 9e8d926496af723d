"""The HTTP layer: the only place that imports ``aiohttp.web``."""
