"""The Ollama- and OpenAI-compatible APIs: :mod:`.ollama`, :mod:`.openai`, and the upstream pipeline they share (:mod:`.pipeline`)."""
