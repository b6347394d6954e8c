/**
 * The one reader of a PostgreSQL error's SQLSTATE (src/store/sql-state.ts), used by the store's
 * unavailable / stopped tests (db.ts), the flush's data-error test (flush.ts) and the account-state
 * writes' transient test (shared-state-writes.ts); and those readers' answers through it.
 */
import { expect, test } from "bun:test";
import { sqlState } from "../../src/store/sql-state.ts";
import { isUnavailable } from "../../src/store/postgres/db.ts";

/** An error as Bun's PostgresError carries it: the state in `errno`, Bun's own code in `code`. */
const pgError = (errno: unknown, code = "ERR_POSTGRES_SERVER_ERROR") => Object.assign(new Error("rejected"), { errno, code });

test("a server error's five-character state is read; anything else is undefined", () => {
  expect(sqlState(pgError("40001"))).toBe("40001");
  expect(sqlState(pgError("22P05"))).toBe("22P05");
  expect(sqlState(pgError("P0001"))).toBe("P0001");
  expect(sqlState(pgError(57014))).toBeUndefined(); // a number is no SQLSTATE
  expect(sqlState(pgError("4000"))).toBeUndefined();
  expect(sqlState(pgError("40p01"))).toBeUndefined();
  expect(sqlState(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))).toBeUndefined();
  expect(sqlState(null)).toBeUndefined();
  expect(sqlState(undefined)).toBeUndefined();
  expect(sqlState("40001")).toBeUndefined();
});

test("the store reads unavailable states through it: classes 08 and 53 and 57P01-57P03, not a rejection", () => {
  expect(isUnavailable(pgError("08006"))).toBe(true);
  expect(isUnavailable(pgError("53300"))).toBe(true);
  expect(isUnavailable(pgError("57P01"))).toBe(true);
  expect(isUnavailable(pgError("40001"))).toBe(false);
  expect(isUnavailable(pgError("57014"))).toBe(false);
  expect(isUnavailable(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))).toBe(true);
});
