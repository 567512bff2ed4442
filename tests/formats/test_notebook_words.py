"""The model's words in an agentic node's ``notebook.ipynb`` render as text and nothing else:
opened in Jupyter (or nbconvert, or GitHub), hostile words — a remote image, HTML, an iframe, a
link — fetch nothing and run nothing. Judged on the HTML a CommonMark renderer (markdown-it,
with raw HTML enabled, as Jupyter's renderers allow it) makes of every markdown cell; the
words read back as written by Podium's own viewer."""

from __future__ import annotations

import random
from html import unescape
from html.parser import HTMLParser

import nbformat
import pytest
from markdown_it import MarkdownIt

from podium.formats.inert_words import fenced, inert_notebook, unfenced
from podium.formats.notebook import Notebook
from podium.records import ExecResult, ExecStatus
from podium.viewer.notebook import parse_notebook

HOSTILE = [
    "![](http://attacker.example/beacon.png)",
    "Here is a plot: ![plot][p]\n\n[p]: http://attacker.example/p.png",
    '<img src="http://attacker.example/x.png" onerror="alert(1)">',
    "<iframe src=http://attacker.example/></iframe>",
    "<script src=http://attacker.example/x.js></script>",
    "<div>\n<svg><image href=http://attacker.example/s.svg /></svg>\n</div>",
    "<style>@import url(http://attacker.example/c.css);</style>",
    '<link rel="stylesheet" href="http://attacker.example/l.css">',
    "<http://attacker.example/auto> [a link](http://attacker.example/l) www.attacker.example",
    "```\n</code></pre><img src=http://attacker.example/fence.png>\n```",
    "````python\nx = 1\n`````\n<img src=http://attacker.example/longer.png>",
    "ends on backticks ``` \n``\n`",
    "~~~\n<img src=http://attacker.example/tilde.png>\n~~~",
    "   ```\n<img src=http://attacker.example/indented.png>",
    "line\r```\r<img src=http://attacker.example/cr.png>",
    "<!-- --><img src=http://attacker.example/comment.png>",
    "```mermaid\ngraph TD; A-->B\n```",
    "| a | b |\n|---|---|\n| ![](http://attacker.example/t.png) | <img src=//attacker.example/> |",
]
ALLOWED = {("pre", ()), ("code", (("class", "language-text"),))}


class Tags(HTMLParser):
    """Every element (with its attributes) in an HTML text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, tuple(attrs)))


def renderer() -> MarkdownIt:
    """CommonMark with raw HTML on, and GFM's tables and strikethrough (Jupyter's marked)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def notebook_with(words: str) -> str:
    notebook = Notebook()
    notebook.say(words, 0)
    notebook.add_cell("print(1)", ExecResult(status=ExecStatus.OK, output="1\n"), 0)
    notebook.say(words, 1)
    return notebook.ipynb({"finished": True})


@pytest.mark.parametrize("words", HOSTILE)
def test_hostile_words_render_as_their_text_and_nothing_else(words: str) -> None:
    text = notebook_with(words)
    nb = nbformat.reads(text, as_version=4)
    said = [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    lines = words.strip().replace("\r\n", "\n").replace("\r", "\n")  # line ends, as read
    assert len(said) == 2
    for source in said:
        html = renderer().render(source)
        tags = Tags()
        tags.feed(html)
        assert set(tags.found) <= ALLOWED, html  # no img, iframe, script, a, link, svg...
        assert "attacker" not in "".join(str(a) for _, a in tags.found)
        shown = html.removeprefix('<pre><code class="language-text">')
        assert unescape(shown.removesuffix("</code></pre>\n")) == lines + "\n"
    read = parse_notebook(text.encode())  # Podium's viewer: the words as the model wrote them
    assert [c.source for c in read.cells if c.kind == "words"] == [lines] * 2


def test_random_markup_never_leaves_the_block() -> None:
    """Strings of the characters markdown and HTML are made of, backticks and line breaks
    above all: each renders as one code block holding exactly the string."""
    rng = random.Random(7)
    alphabet = ["`", "``", "```", "~", "\n", "\r", " ", "<", ">", "img", "!", "[", "]", "(",
                ")", "http://a.example/x", "&", "-", "|", "*", "\t", "\\"]  # fmt: skip
    md = renderer()
    for _ in range(500):
        words = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        html = md.render(fenced(words))
        tags = Tags()
        tags.feed(html)
        assert set(tags.found) <= ALLOWED, (words, html)
        assert html.count("<pre>") == 1, (words, html)
        assert unfenced(fenced(words)) == words


def test_other_markdown_is_read_as_it_is() -> None:
    """A notebook from before (or from a plugin) keeps its markdown as written."""
    for source in ("plain words", "```python\nx = 1\n```", "```text\nunclosed"):
        assert unfenced(source) == source


def test_a_plugins_notebook_is_written_with_nothing_a_viewer_fetches_or_runs() -> None:
    """A plugin operator's notebook (code Podium does not own) loses what would render: its
    markdown fenced, a raw cell's HTML format forgotten, outputs' HTML, SVG and JavaScript
    dropped; its code and plain-text outputs kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(HOSTILE[0]),
        nbformat.v4.new_raw_cell(HOSTILE[2], metadata={"format": "text/html"}),
        nbformat.v4.new_code_cell("show()", outputs=[nbformat.v4.new_output(
            "display_data", data={"text/html": HOSTILE[2], "image/svg+xml": HOSTILE[5],
                                  "application/javascript": "fetch('//attacker.example')",
                                  "text/plain": "<a figure>"})]),
    ]  # fmt: skip
    text = inert_notebook(nbformat.writes(nb))
    written = nbformat.reads(text, as_version=4)
    nbformat.validate(written)
    markdown, raw, code = written.cells
    assert unfenced(markdown.source) == HOSTILE[0]
    tags = Tags()
    tags.feed(renderer().render(markdown.source))
    assert set(tags.found) <= ALLOWED
    assert "format" not in raw.metadata
    assert code.source == "show()" and code.outputs[0].data == {"text/plain": "<a figure>"}
    assert inert_notebook(text) == text  # already inert: unchanged
    assert inert_notebook("not a notebook") == "not a notebook"
