"""The one upstream: Ollama. ``client`` builds the official ``ollama.AsyncClient`` and
owns timeouts, connection limits and the error translation; ``embed`` and ``chat`` use the
official client; ``proxy`` relays raw requests for the compatible APIs."""
