"""A demo CMS as a real MCP server: spaces, channels, articles, tags and pages in SQLite.

Every tool answers `{"code": 200, "data": …, "msg": "ok"}`; a business failure is another code
(400 bad input, 404 not found, 409 conflict) with `data` null, never an MCP error, so a contract's
`success`/`error` decide what counts (spec §6). The database path comes from `CMS_DB` (default: a
file in the system temp folder); tables are created and seeded on start.

Run: `python -m skillc.examples.cms_server` (stdio) or `… --http PORT` (streamable HTTP on
127.0.0.1).
"""
from __future__ import annotations

import os
import sqlite3
import tempfile
from datetime import datetime, timezone
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from skillc.examples.serving import serve_main

OK = 200
BAD_REQUEST = 400
NOT_FOUND = 404
CONFLICT = 409

SCHEMA = """
CREATE TABLE IF NOT EXISTS space (id INTEGER PRIMARY KEY, name TEXT NOT NULL, organ_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS channel (id INTEGER PRIMARY KEY, space_id INTEGER NOT NULL, code TEXT NOT NULL,
                                    name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS article (id INTEGER PRIMARY KEY AUTOINCREMENT, space_id INTEGER NOT NULL,
    title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', summary TEXT, status TEXT NOT NULL DEFAULT 'DRAFT',
    author_id INTEGER, channel_id INTEGER, visibility TEXT, published_at TEXT, updated_by INTEGER);
CREATE TABLE IF NOT EXISTS tag (article_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (article_id, tag));
CREATE TABLE IF NOT EXISTS page (id INTEGER PRIMARY KEY AUTOINCREMENT, space_id INTEGER NOT NULL,
    path TEXT NOT NULL, title TEXT NOT NULL, status TEXT NOT NULL, author_id INTEGER, breadcrumb TEXT,
    UNIQUE (space_id, path));
CREATE TABLE IF NOT EXISTS page_block (page_id INTEGER NOT NULL, position INTEGER NOT NULL,
    article_id INTEGER NOT NULL, heading TEXT);
"""

# Ids are chosen so the public scenario 01 plays unchanged against this server: organisation 9
# owns space 3 "Website", and the next article created gets id 17.
SEED = """
INSERT INTO space VALUES (3, 'Website', 9), (4, 'Intranet', 9), (5, 'Partner portal', 12);
INSERT INTO channel VALUES (1, 3, 'news', 'News'), (2, 3, 'blog', 'Blog'),
                           (3, 4, 'announcements', 'Announcements'), (4, 5, 'partners', 'Partners');
INSERT INTO article (id, space_id, title, body, status, author_id, channel_id, visibility, published_at) VALUES
  (11, 3, 'Welcome to Acme', 'Who we are.', 'PUBLISHED', 7, 1, 'PUBLIC', '2026-01-05T09:00:00+00:00'),
  (12, 3, 'Spring sale', 'Twenty percent off.', 'DRAFT', 7, NULL, NULL, NULL),
  (13, 4, 'Holiday schedule', 'Office closed on the 24th.', 'PUBLISHED', 8, 3, 'INTERNAL',
   '2026-02-01T08:00:00+00:00'),
  (14, 4, 'Office move', 'We move in May.', 'DRAFT', 8, NULL, NULL, NULL),
  (15, 5, 'Partner onboarding', 'Steps for new partners.', 'PUBLISHED', 9, 4, 'PUBLIC',
   '2026-03-01T10:00:00+00:00'),
  (16, 3, 'Autumn roadmap', 'What ships in autumn.', 'DRAFT', 7, NULL, NULL, NULL);
INSERT INTO tag VALUES (11, 'company'), (13, 'hr');
INSERT INTO page (id, space_id, path, title, status, author_id) VALUES (1, 3, '/home', 'Home', 'ONLINE', 7);
INSERT INTO page_block VALUES (1, 0, 11, 'Welcome');
"""


class PageBlock(BaseModel):
    """One block of a page: an article shown under an optional heading."""

    articleId: int
    heading: str | None = None


def default_db_path() -> str:
    """The database file: `$CMS_DB`, else `skillc-cms.sqlite` in the temp folder."""
    return os.environ.get("CMS_DB") or os.path.join(tempfile.gettempdir(), "skillc-cms.sqlite")


def open_db(path: str) -> sqlite3.Connection:
    """Open (and on first use create and seed) the CMS database."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)  # autocommit: each tool call is one statement group
    db.row_factory = sqlite3.Row
    db.executescript(SCHEMA)
    if db.execute("SELECT COUNT(*) FROM space").fetchone()[0] == 0:
        db.executescript("BEGIN;" + SEED + "COMMIT;")
    return db


def ok(data: Any, msg: str = "ok") -> dict[str, Any]:
    """A success envelope."""
    return {"code": OK, "data": data, "msg": msg}


def fail(code: int, msg: str) -> dict[str, Any]:
    """A business-failure envelope: a non-200 code, no data."""
    return {"code": code, "data": None, "msg": msg}


def _article(row: sqlite3.Row, tags: list[str] | None = None) -> dict[str, Any]:
    out = {"id": row["id"], "title": row["title"], "spaceId": row["space_id"], "status": row["status"],
           "authorId": row["author_id"], "channelId": row["channel_id"], "visibility": row["visibility"],
           "publishedAt": row["published_at"]}
    if tags is not None:
        out.update(body=row["body"], summary=row["summary"], tags=tags)
    return out


def _summary(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "title": row["title"], "spaceId": row["space_id"], "status": row["status"]}


def _page(db: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    blocks = [{"articleId": b["article_id"], "heading": b["heading"]} for b in db.execute(
        "SELECT * FROM page_block WHERE page_id = ? ORDER BY position", (row["id"],))]
    return {"id": row["id"], "spaceId": row["space_id"], "path": row["path"], "title": row["title"],
            "status": row["status"], "breadcrumb": row["breadcrumb"], "blocks": blocks,
            "url": f"https://cms.example/{row['space_id']}{row['path']}"}


_SLOWED: set[str] = set()


async def slow_answer(tool: str) -> None:
    """Demo hook: the first call of each tool named in CMS_SLOW_FIRST (comma-separated) takes
    effect, then answers only after CMS_SLOW_SECONDS (default 3): a lost answer for the runtime's
    timeout, so `skillc demo` can show an uncertain write being verified."""
    names = {n.strip() for n in os.environ.get("CMS_SLOW_FIRST", "").split(",") if n.strip()}
    if tool in names and tool not in _SLOWED:
        _SLOWED.add(tool)
        import asyncio

        await asyncio.sleep(float(os.environ.get("CMS_SLOW_SECONDS", "3")))


def build_server(db_path: str | None = None) -> MCPServer:
    """The CMS MCP server over the SQLite file at `db_path` (default `default_db_path()`)."""
    db = open_db(db_path or default_db_path())
    server = MCPServer("skillc-demo-cms", instructions="Demo CMS: spaces, channels, articles, tags, pages.")

    def get_article(article_id: int) -> sqlite3.Row | None:
        return db.execute("SELECT * FROM article WHERE id = ?", (article_id,)).fetchone()

    def get_space(space_id: int) -> sqlite3.Row | None:
        return db.execute("SELECT * FROM space WHERE id = ?", (space_id,)).fetchone()

    # ------------------------------------------------------------------ spaces and channels

    @server.tool(title="List spaces")
    async def cms_space_list(organId: int) -> dict[str, Any]:
        """List the CMS spaces of an organisation."""
        rows = db.execute("SELECT * FROM space WHERE organ_id = ? ORDER BY id", (organId,))
        return ok([{"id": r["id"], "name": r["name"], "organId": r["organ_id"]} for r in rows])

    @server.tool(title="Get a space")
    async def cms_space_get(spaceId: int) -> dict[str, Any]:
        """Get one space with its channel count; 404 when it does not exist."""
        row = get_space(spaceId)
        if row is None:
            return fail(NOT_FOUND, f"space {spaceId} not found")
        count = db.execute("SELECT COUNT(*) FROM channel WHERE space_id = ?", (spaceId,)).fetchone()[0]
        return ok({"id": row["id"], "name": row["name"], "organId": row["organ_id"], "channelCount": count})

    @server.tool(title="List channels")
    async def cms_channel_list(spaceId: int) -> dict[str, Any]:
        """List the publishing channels of a space; 404 when the space does not exist."""
        if get_space(spaceId) is None:
            return fail(NOT_FOUND, f"space {spaceId} not found")
        rows = db.execute("SELECT * FROM channel WHERE space_id = ? ORDER BY id", (spaceId,))
        return ok([{"id": r["id"], "spaceId": r["space_id"], "code": r["code"], "name": r["name"]} for r in rows])

    # ------------------------------------------------------------------ articles: reads

    @server.tool(title="Search articles")
    async def cms_article_search(keyword: str, spaceId: int | None = None) -> dict[str, Any]:
        """Search articles whose title or body contains the keyword, optionally within one space."""
        sql, args = "SELECT * FROM article WHERE (title LIKE ? OR body LIKE ?)", [f"%{keyword}%"] * 2
        if spaceId is not None:
            sql, args = sql + " AND space_id = ?", [*args, spaceId]
        records = [_summary(r) for r in db.execute(sql + " ORDER BY id", args)]
        return ok({"records": records, "total": len(records)})

    @server.tool(title="Get an article")
    async def cms_article_get(articleId: int | None = None) -> dict[str, Any]:
        """Get one article with its body and tags; 404 when it does not exist."""
        if articleId is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "articleId is required")
        row = get_article(articleId)
        if row is None:
            return fail(NOT_FOUND, f"article {articleId} not found")
        tags = [t[0] for t in db.execute("SELECT tag FROM tag WHERE article_id = ? ORDER BY tag", (articleId,))]
        return ok(_article(row, tags))

    @server.tool(title="List articles")
    async def cms_article_list(spaceId: int | None = None, status: str | None = None) -> dict[str, Any]:
        """List articles, optionally by space and by status (DRAFT or PUBLISHED)."""
        if status is not None and status not in ("DRAFT", "PUBLISHED"):
            return fail(BAD_REQUEST, f"unknown status {status!r}: use DRAFT or PUBLISHED")
        sql, args = "SELECT * FROM article WHERE 1 = 1", []
        if spaceId is not None:
            sql, args = sql + " AND space_id = ?", [*args, spaceId]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        return ok([_summary(r) for r in db.execute(sql + " ORDER BY id", args)])

    @server.tool(title="Check an article's status")
    async def cms_article_check(articleId: int, status: str) -> dict[str, Any]:
        """Whether an article is in the given status: `data.matches` (for verifying a write)."""
        row = get_article(articleId)
        actual = row["status"] if row is not None else None
        return ok({"articleId": articleId, "status": actual, "matches": actual == status})

    # ------------------------------------------------------------------ articles: writes

    @server.tool(title="Create an article")
    async def cms_article_create(title: str, authorId: int, body: str = "", spaceId: int | None = None) -> dict[str, Any]:
        """Create a draft article in a space; 404 unknown space, 409 same title already in the space."""
        if spaceId is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "spaceId is required")
        if not title.strip():
            return fail(BAD_REQUEST, "title is empty")
        if get_space(spaceId) is None:
            return fail(NOT_FOUND, f"space {spaceId} not found")
        if db.execute("SELECT 1 FROM article WHERE space_id = ? AND title = ?", (spaceId, title)).fetchone():
            return fail(CONFLICT, f"an article titled {title!r} already exists in space {spaceId}")
        cur = db.execute("INSERT INTO article (space_id, title, body, author_id) VALUES (?, ?, ?, ?)",
                         (spaceId, title, body, authorId))
        return ok(_summary(get_article(int(cur.lastrowid or 0))), "created")

    @server.tool(title="Rename an article")
    async def cms_article_rename(articleId: int, title: str, editorId: int | None = None) -> dict[str, Any]:
        """Change an article's title; 404 unknown article, 400 empty title."""
        if not title.strip():
            return fail(BAD_REQUEST, "title is empty")
        if get_article(articleId) is None:
            return fail(NOT_FOUND, f"article {articleId} not found")
        db.execute("UPDATE article SET title = ?, updated_by = ? WHERE id = ?", (title, editorId, articleId))
        return ok(_summary(get_article(articleId)), "renamed")

    @server.tool(title="Update an article")
    async def cms_article_update(articleId: int, body: str | None = None, summary: str | None = None,
                                 editorId: int | None = None) -> dict[str, Any]:
        """Replace an article's body and/or summary; 404 unknown article."""
        if get_article(articleId) is None:
            return fail(NOT_FOUND, f"article {articleId} not found")
        db.execute("UPDATE article SET body = COALESCE(?, body), summary = COALESCE(?, summary), updated_by = ?"
                   " WHERE id = ?", (body, summary, editorId, articleId))
        return ok(_summary(get_article(articleId)), "updated")

    @server.tool(title="Publish an article")
    async def cms_article_publish(articleId: int, publisherId: int,
                                  visibility: str = "PUBLIC", channelId: int | None = None) -> dict[str, Any]:
        """Publish an article on a channel of its own space; 404 unknown article/channel, 409 wrong space."""
        if channelId is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "channelId is required")
        row = get_article(articleId)
        if row is None:
            return fail(NOT_FOUND, f"article {articleId} not found")
        channel = db.execute("SELECT * FROM channel WHERE id = ?", (channelId,)).fetchone()
        if channel is None:
            return fail(NOT_FOUND, f"channel {channelId} not found")
        if channel["space_id"] != row["space_id"]:
            return fail(CONFLICT, f"channel {channelId} is not in the article's space {row['space_id']}")
        if visibility not in ("PUBLIC", "INTERNAL"):
            return fail(BAD_REQUEST, f"unknown visibility {visibility!r}")
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        db.execute("UPDATE article SET status = 'PUBLISHED', channel_id = ?, visibility = ?, published_at = ?,"
                   " updated_by = ? WHERE id = ?", (channelId, visibility, now, publisherId, articleId))
        data = _summary(get_article(articleId))
        data.update(channelId=channelId, url=f"https://cms.example/{channel['code']}/{articleId}")
        return ok(data, "published")

    # ------------------------------------------------------------------ tags

    @server.tool(title="Add a tag")
    async def cms_tag_add(articleId: int, tag: str) -> dict[str, Any]:
        """Tag an article (adding an existing tag again is a no-op); 404 unknown article."""
        if not tag.strip():
            return fail(BAD_REQUEST, "tag is empty")
        if get_article(articleId) is None:
            return fail(NOT_FOUND, f"article {articleId} not found")
        db.execute("INSERT OR IGNORE INTO tag VALUES (?, ?)", (articleId, tag))
        await slow_answer("cms_tag_add")
        return ok({"articleId": articleId, "tag": tag}, "tagged")

    @server.tool(title="Find a tag")
    async def cms_tag_find(articleId: int, tag: str) -> dict[str, Any]:
        """Whether an article carries a tag: `data.found`."""
        found = db.execute("SELECT 1 FROM tag WHERE article_id = ? AND tag = ?", (articleId, tag)).fetchone()
        return ok({"articleId": articleId, "tag": tag, "found": found is not None})

    # ------------------------------------------------------------------ pages

    @server.tool(title="Create a page")
    async def cms_page_create(path: str, title: str, authorId: int, blocks: list[PageBlock],
                              status: str = "DRAFT", breadcrumb: str | None = None, spaceId: int | None = None) -> dict[str, Any]:
        """Create a page listing articles; 201 created, 200 when an identical page exists, 409 path taken."""
        if spaceId is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "spaceId is required")
        if get_space(spaceId) is None:
            return fail(NOT_FOUND, f"space {spaceId} not found")
        if not path.startswith("/"):
            return fail(BAD_REQUEST, "a page path starts with '/'")
        if status not in ("DRAFT", "ONLINE"):
            return fail(BAD_REQUEST, f"unknown page status {status!r}: use DRAFT or ONLINE")
        missing = [b.articleId for b in blocks if get_article(b.articleId) is None]
        if missing:
            return fail(NOT_FOUND, f"articles not found: {missing}")
        old = db.execute("SELECT * FROM page WHERE space_id = ? AND path = ?", (spaceId, path)).fetchone()
        if old is not None:
            same = _page(db, old)["blocks"] == [b.model_dump() for b in blocks] and old["title"] == title
            return ok(_page(db, old), "unchanged") if same else fail(CONFLICT, f"path {path} is taken")
        cur = db.execute("INSERT INTO page (space_id, path, title, status, author_id, breadcrumb)"
                         " VALUES (?, ?, ?, ?, ?, ?)", (spaceId, path, title, status, authorId, breadcrumb))
        page_id = int(cur.lastrowid or 0)
        db.executemany("INSERT INTO page_block VALUES (?, ?, ?, ?)",
                       [(page_id, i, b.articleId, b.heading) for i, b in enumerate(blocks)])
        row = db.execute("SELECT * FROM page WHERE id = ?", (page_id,)).fetchone()
        return {"code": 201, "data": _page(db, row), "msg": "created"}

    @server.tool(title="Get a page")
    async def cms_page_get(pageId: int) -> dict[str, Any]:
        """Get one page with its blocks; 404 when it does not exist."""
        row = db.execute("SELECT * FROM page WHERE id = ?", (pageId,)).fetchone()
        return fail(NOT_FOUND, f"page {pageId} not found") if row is None else ok(_page(db, row))

    @server.tool(title="List pages")
    async def cms_page_list(spaceId: int, path: str | None = None) -> dict[str, Any]:
        """List the pages of a space, optionally only the one at `path`: `data.records`, `data.total`."""
        sql, args = "SELECT * FROM page WHERE space_id = ?", [spaceId]
        if path is not None:
            sql, args = sql + " AND path = ?", [*args, path]
        records = [_page(db, r) for r in db.execute(sql + " ORDER BY id", args)]
        return ok({"records": records, "total": len(records)})

    return server


def main(argv: list[str] | None = None) -> None:
    """Serve over stdio, or over streamable HTTP on 127.0.0.1 with `--http PORT`."""
    serve_main(build_server, module="cms_server", env="CMS_DB", description=__doc__, argv=argv)


if __name__ == "__main__":
    main()
