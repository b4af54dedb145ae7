"""The environment variables that hold the API keys (their names only: a key itself is never
read into anything that is logged, saved or shown)."""

from __future__ import annotations

API_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
