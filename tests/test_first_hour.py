"""A newcomer's first hour: README.md followed top to bottom in a clean folder (set-up aside).

The folder holds what a fresh clone brings (examples/, generated/) and nothing else. The test
reads the README each time and does what it says: the tour's commands, reviewing a contract change
with `skillc diff` (its output line for line), the first skill's files and commands, serving with
the model stub and an approval resume, embedding. A command that exits
non-zero fails the test, and so does an output that lacks what the README says it shows. The only
liberties are the ones a reader takes without noticing: free ports instead of 8090/8091/8765 (other
tests run meanwhile), the script in this folder instead of /tmp, waiting for a server started with
`&` to listen before the next command, and the digest the first stream printed for `<digest>`.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import readme
from helpers.serve_workers import free_port
from helpers.wait import wait_for

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300  # seconds per command: the demo starts a real MCP server on a loaded machine


class Newcomer:
    """A shell in the clean folder: runs README commands, keeps servers started with `&`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        ports = {"8090": free_port(), "8091": free_port(), "8765": free_port()}
        self.swaps = {f":{old}": f":{new}" for old, new in ports.items()}
        self.swaps.update({f"--port {old}": f"--port {new}" for old, new in ports.items()})
        self.swaps["/tmp/script.json"] = str(folder / "script.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLC_", "OTEL_"))}
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        self.env = env
        self.background: list[subprocess.Popen[bytes]] = []

    def local(self, text: str) -> str:
        """The README's text with this run's ports and paths."""
        for old, new in self.swaps.items():
            text = text.replace(old, new)
        return text

    def write(self, path: str, body: str) -> None:
        """A file the README shows, written where it says."""
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.local(body), encoding="utf-8")

    def run(self, command: str, status: int = 0) -> str:
        """One README command; its output (stdout + stderr). Fails the test when it exits with
        another status than the README says (0 unless it shows one)."""
        command = self.local(command)
        if command.rstrip().endswith("&"):
            self._start(command.rstrip()[:-1])
            return ""
        try:
            done = subprocess.run(["bash", "-c", command], cwd=self.folder, env=self.env, capture_output=True,
                                  text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:  # what it printed says where it stopped
            said = (exc.stdout or b"") + (exc.stderr or b"")
            raise AssertionError(f"`{command}` ran past {TIMEOUT} s; it printed:\n"
                                 f"{said.decode(errors='replace') if isinstance(said, bytes) else said}") from None
        out = done.stdout + done.stderr
        assert done.returncode == status, f"`{command}` exited {done.returncode}, not {status}:\n{out}"
        return out

    def _start(self, command: str) -> None:
        """A server the README starts with `&`; the next command waits until its port listens."""
        port = int(re.search(r"--port (\d+)", command).group(1))  # type: ignore[union-attr]
        log = open(self.folder / f"server-{port}.log", "wb")  # noqa: SIM115 - lives as long as the server
        self.background.append(subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=self.folder, env=self.env,
                                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        proc = self.background[-1]

        def listening() -> bool:
            assert proc.poll() is None, f"`{command}` exited {proc.returncode}:\n{self.log(port)}"
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        wait_for(listening, f"`{command}` to listen")

    def log(self, port: int) -> str:
        return (self.folder / f"server-{port}.log").read_text(errors="replace")

    def close(self) -> None:
        """Stop the servers this newcomer started (SIGTERM, as Ctrl-C would; then kill)."""
        for proc in self.background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.background:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)


@pytest.fixture
def newcomer(tmp_path: Path) -> Newcomer:
    """A clean folder with what a fresh clone has beside the code: examples/ and generated/."""
    ignore = shutil.ignore_patterns("__pycache__", ".skillc", "*.pyc")
    for part in ("examples", "generated"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=ignore)
    person = Newcomer(tmp_path)
    yield person
    person.close()


def shown(sentence: str) -> list[str]:
    """The words of a sentence's code spans (`skillc.verdict APPROVAL_REQUIRED` -> 2 words)."""
    return [word for span in readme.spans(sentence) for word in span.split() if word not in ("…", "<digest>")]


def sentence(text: str, start: str) -> str:
    """The sentence of `text` that begins with `start`."""
    at = text.index(start)
    end = re.search(r"\.\s+[A-Z]|\.\n\n|:\n\n", text[at:])
    return text[at:at + end.start() + 1] if end else text[at:]


def tour(person: Newcomer) -> None:
    text = readme.section("A tour")
    ran = {}
    for command in re.findall(r"\*\*`(skillc [^`]+)`\*\*", text):
        if command.startswith("skillc chat"):
            continue  # a real model: what `serve` below does with the stub instead
        if "FILE…" in command:  # "examples in `examples/scenarios/`"
            command = command.replace("FILE…", "examples/scenarios/*.yaml")
        ran[command.split()[1]] = person.run(command)
    assert set(ran) == {"demo", "check", "compile", "explain", "graph", "scenario"}, ran.keys()
    trace = re.findall(r"(\S+\.jsonl)", ran["demo"].strip().splitlines()[-1])  # "ends with the path of the trace"
    assert trace and (person.folder / trace[-1]).is_file(), ran["demo"][-500:]
    assert ", 0 rejected; 0 errors" in ran["check"], ran["check"]
    for path in re.findall(r"`(generated/[^`]+)`", text):  # the files the tour names
        assert (person.folder / path).is_file(), path
    assert "0 files written," not in ran["compile"], ran["compile"]  # a checked-out generated/ is current
    assert ran["explain"].startswith("skill cms.article.lifecycle"), ran["explain"]
    assert ran["graph"].lstrip().startswith(("flowchart", "graph")), ran["graph"]
    assert re.search(r"^\d+ passed, 0 failed$", ran["scenario"], re.M), ran["scenario"]


def first_skill(person: Newcomer) -> None:
    text = readme.section("Writing a first skill")
    for path, body in readme.files(text).items():
        person.write(path, body)
    out = [person.run(c) for block in readme.blocks(text, "sh") for c in readme.commands(block)]
    assert len(out) == 3, out
    assert "1 loaded, 0 rejected; 0 errors, 0 warnings" in out[0], out[0]
    assert "from 'platform.organId'" in out[1], out[1]
    assert "PASS first-article" in out[2] and "warning" not in out[2], out[2]


# "Say an edit of … contract.jsonc lets the model write the title, drops the write's approval and
# idempotency key, also accepts 409 as success and renames a label": the README tells the edit in
# words; these are those words as text edits.
REVIEWED_EDIT = [
    ('"title":    { "sources": ["USER"]', '"title":    { "sources": ["USER", "MODEL"]'),
    ('"sideEffect": "WRITE",', '"sideEffect": "WRITE",\n      "confirm": false,'),
    ('      "idempotencyKey": ["spaceId", "title"],\n', ''),
    ('"success": { "path": "code", "op": "EQ", "value": 200 },\n      "error"',
     '"success": { "path": "code", "op": "IN", "value": [200, 409] },\n      "error"'),
    ('"label": "Looking up spaces"', '"label": "Listing spaces"'),
]


def reviewing(person: Newcomer) -> None:
    """`skillc diff` on the README's edit, in a git checkout: the output is the README's, line for line."""
    text = readme.section("Reviewing a contract change: `skillc diff`")
    (session,) = readme.blocks(text, "console")
    git = {"GIT_AUTHOR_NAME": "n", "GIT_AUTHOR_EMAIL": "n@example.org", "GIT_COMMITTER_NAME": "n",
           "GIT_COMMITTER_EMAIL": "n@example.org"}
    person.env.update(git)
    person.run("git init -q && git add examples && git commit -qm clone")
    contract = person.folder / re.search(r"`(examples/studio/skills/[^`]+/contract\.jsonc)`", text).group(1)  # type: ignore[union-attr]
    body = contract.read_text(encoding="utf-8")
    for old, new in REVIEWED_EDIT:
        assert old in body, old
        body = body.replace(old, new, 1)
    contract.write_text(body, encoding="utf-8")
    command, *shown = session.split("\n$ echo $?")[0].splitlines()
    status = int(session.split("\n$ echo $?\n")[1].split()[0])
    out = person.run(command.removeprefix("$ "), status=status)
    assert out.splitlines() == shown, f"the README shows:\n{chr(10).join(shown)}\nskillc says:\n{out}"


def serving(person: Newcomer) -> None:
    text = readme.section("Serving: `skillc serve`")
    first, resume = readme.blocks(text, "bash")[:2]
    streams = [person.run(c) for c in readme.commands(first)]
    stream = streams[-1]
    for word in shown(sentence(text, "The stream shows")):
        assert word in stream, f"the README says the stream shows {word!r}:\n{stream}"
    digests = re.findall(r'"digest":"([^"]+)"', stream)
    assert digests, stream
    (command,) = readme.commands(resume)
    answered = person.run(command.replace("<digest>", digests[-1]))
    for word in shown(sentence(text, "This stream shows")):
        assert word in answered, f"the README says the resume's stream shows {word!r}:\n{answered}"
    assert '"outcome":{"type":"success"}' in answered and "RUN_ERROR" not in answered, answered


def embedding(person: Newcomer) -> None:
    text = readme.section("Embedding the runtime")
    for path, body in readme.files(text).items():
        person.write(path, body)
    for block in readme.blocks(text, "sh"):
        for command in readme.commands(block):
            person.run(command)
    (snippet,) = readme.blocks(text, "python")
    (person.folder / "embed.py").write_text(snippet, encoding="utf-8")
    out = person.run(f"{sys.executable} embed.py")
    assert "mcp.invoked cms_space_list" in out, out  # a real MCP server was reached
    assert "tool.call cms_article_create" in out and "node.suspended" in out, out  # the write, stopped by the gate
    assert "'kind': 'APPROVAL'" in out, out  # session.pending(): the session waits on the user
    assert "error" not in out.lower(), out
    assert (person.folder / "store.sqlite").is_file()


def test_a_newcomer_follows_the_readme_top_to_bottom(newcomer: Newcomer) -> None:
    tour(newcomer)
    reviewing(newcomer)
    first_skill(newcomer)
    serving(newcomer)
    embedding(newcomer)
