"""The README's complete bots are the files they name, word for word: a block introduced by
``... `path`:`` and fenced as code must equal that file, so the README never shows a bot that
drifted from the tested one."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# A line ending in `some/path.ext`: followed by a blank line and a fenced block.
SNIPPET = re.compile(r"`([\w./-]+\.(?:py|go|rs))`:\n\n```\w+\n(.*?)```\n", re.S)


def test_the_readme_bots_are_the_files_they_name():
    readme = (ROOT / "README.md").read_text()
    snippets = SNIPPET.findall(readme)
    named = [path for path, _ in snippets]
    assert "clients/python/examples/random_bot.py" in named, named
    assert "clients/go/examples/highcard/main.go" in named, named
    for path, text in snippets:
        assert text == (ROOT / path).read_text(), f"README.md's block for {path} differs from the file"
