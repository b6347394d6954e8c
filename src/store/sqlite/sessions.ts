/**
 * Dashboard sessions in SQLite (SPEC 9.4): the `dashboard_sessions` table (migration 11). Every write
 * commits before it returns. See `../sessions.ts` for what a row holds (hashes only).
 */
import type { SessionRow, SessionStore } from "../sessions.ts";
import type { SqliteContext } from "./db.ts";

interface Row {
  token_hash: string;
  subject: string;
  key_hash: string | null;
  created_at: number;
  expires_at: number;
}

/** The `SessionStore` role of the SQLite store. */
export class SqliteSessions implements SessionStore {
  private readonly s;

  /** Prepares the statements. */
  constructor(private readonly ctx: SqliteContext) {
    const db = ctx.db;
    this.s = {
      put: db.prepare("INSERT OR REPLACE INTO dashboard_sessions (token_hash, subject, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)"),
      expire: db.prepare("DELETE FROM dashboard_sessions WHERE expires_at <= ?"),
      trim: db.prepare(
        `DELETE FROM dashboard_sessions WHERE token_hash IN (
           SELECT token_hash FROM dashboard_sessions WHERE (key_hash IS NULL) = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
      ),
      get: db.prepare("SELECT token_hash, subject, key_hash, created_at, expires_at FROM dashboard_sessions WHERE token_hash = ?"),
      del: db.prepare("DELETE FROM dashboard_sessions WHERE token_hash = ?"),
      delKey: db.prepare("DELETE FROM dashboard_sessions WHERE key_hash = ?"),
    };
  }

  putSession(row: SessionRow, maxOfKind: number): void {
    this.ctx.assertOpen();
    this.ctx.db.transaction(() => {
      this.s.expire.run(Math.round(row.createdAt));
      this.s.put.run(row.tokenHash, row.subject, row.keyHash, Math.round(row.createdAt), Math.round(row.expiresAt));
      this.s.trim.run(row.keyHash === null ? 1 : 0, Math.max(1, Math.floor(maxOfKind)));
    })();
  }

  getSession(tokenHash: string): SessionRow | undefined {
    this.ctx.assertOpen();
    const r = this.s.get.get(tokenHash) as Row | null;
    return r ? { tokenHash: r.token_hash, subject: r.subject, keyHash: r.key_hash, createdAt: r.created_at, expiresAt: r.expires_at } : undefined;
  }

  deleteSession(tokenHash: string): void {
    this.ctx.assertOpen();
    this.s.del.run(tokenHash);
  }

  deleteSessionsOfKeys(keyHashes: string[]): void {
    this.ctx.assertOpen();
    this.ctx.db.transaction(() => {
      for (const h of keyHashes) this.s.delKey.run(String(h));
    })();
  }
}
