/**
 * PEM private-key blocks (pipeline/key-shapes.ts `replacePrivateKeyBlocks`), which the secret scrubber
 * and redaction both replace: BEGIN line to the next END line, whatever lies between; a BEGIN without an
 * END is left as it is. Found by two searches instead of a lazy regex, which took seconds on a text of
 * unfinished BEGIN lines (review15 R0; how long it takes is measured by `scripts/bench targets`).
 */
import { describe, expect, test } from "bun:test";
import { replacePrivateKeyBlocks } from "../../pipeline/key-shapes.ts";
import { scrubText } from "../../pipeline/scrub.ts";
import { Redactor } from "../../pipeline/redact.ts";

const RSA = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIEpAIBAAKCAQEA1x2y3z\n-----END RSA PRIVATE KEY-----";
const PLAIN = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8w\n-----END PRIVATE KEY-----";

describe("replacePrivateKeyBlocks", () => {
  test("each block, with its headers, is replaced; the text around and between stays", () => {
    const text = `key one:\n${RSA}\nand two: ${PLAIN} end`;
    const seen: string[] = [];
    expect(replacePrivateKeyBlocks(text, (b) => (seen.push(b), "[K]"))).toBe("key one:\n[K]\nand two: [K] end");
    expect(seen).toEqual([RSA, PLAIN]);
  });

  test("a BEGIN without an END is left, as is everything after it; public keys and certificates are not private keys", () => {
    const open = "-----BEGIN PRIVATE KEY-----x".repeat(3);
    expect(replacePrivateKeyBlocks(`${PLAIN} then ${open}`, () => "[K]")).toBe(`[K] then ${open}`);
    const cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    expect(replacePrivateKeyBlocks(cert, () => "[K]")).toBe(cert);
    expect(replacePrivateKeyBlocks("no key here", () => "[K]")).toBe("no key here");
  });

  test("the scrubber and redaction replace blocks through it, also after a run of unfinished BEGIN lines", () => {
    const text = `${"-----BEGIN PRIVATE KEY-----x".repeat(2000)}\n${PLAIN}`;
    // from the first BEGIN to the first END after it is one block, as the lazy regex read it
    expect(scrubText(text)).toBe("[redacted]");
    expect(scrubText(`before ${PLAIN} after`)).toBe("before [redacted] after");
    const r = new Redactor();
    expect(r.redact(`a ${RSA} b`)).toBe("a [SECRET_1] b");
    expect(r.originals.get("[SECRET_1]")).toEqual(expect.objectContaining({ kind: "secret" }));
  });
});
