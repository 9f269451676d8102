"""``python -m logagent.vector_keys [README.md]``: print README's Vector table, or rewrite it in the file.

The table sits between ``<!-- vector-keys:start -->`` and ``<!-- vector-keys:end -->``.
"""

import re
import sys
from pathlib import Path

from logagent.vector_keys import render_markdown

if len(sys.argv) > 1:
    readme = Path(sys.argv[1])
    text = readme.read_text(encoding="utf-8")
    table = "<!-- vector-keys:start -->\n" + render_markdown() + "<!-- vector-keys:end -->"
    new, count = re.subn(r"<!-- vector-keys:start -->\n.*?<!-- vector-keys:end -->", lambda _: table, text, flags=re.S)
    if count != 1:
        sys.exit(f"{readme}: expected one vector-keys:start/end pair of markers")
    readme.write_text(new, encoding="utf-8")
else:
    print(render_markdown(), end="")
