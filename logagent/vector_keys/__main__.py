"""``python -m logagent.vector_keys``: print README's Vector table (markdown)."""

from logagent.vector_keys import render_markdown

print(render_markdown(), end="")
