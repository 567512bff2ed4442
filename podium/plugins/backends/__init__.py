"""The builtin model backends (openai, anthropic, litellm, scripted) and replay.

The SDK-backed modules import their SDK at module level, so nothing here imports them eagerly:
``podium.plugins.builtin`` reaches each one only when a user picks it.
"""
