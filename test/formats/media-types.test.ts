/** formats/media-types.ts: image types by their magic bytes, data URLs read into base64. */
import { describe, expect, test } from "bun:test";
import { dataUrlBase64, sniffImageType } from "../../formats/media-types.ts";

const b64 = (s: string) => btoa(s);

describe("sniffImageType", () => {
  test.each([
    ["\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "image/png"],
    ["\xff\xd8\xff\xe0\0\x10JFIF", "image/jpeg"],
    ["GIF89a\x01\0\x01\0", "image/gif"],
    ["RIFF\x24\0\0\0WEBPVP8 ", "image/webp"],
    ["\0\0\0\x18ftypheic\0\0\0\0", "image/heic"],
    ["\0\0\0\x1cftypavif\0\0\0\0", "image/avif"],
    ["BM\x36\0\0\0\0\0", "image/bmp"],
    ["II*\0\x08\0\0\0", "image/tiff"],
    ['\ufeff  <svg xmlns="http://www.w3.org/2000/svg"/>'.replace("\ufeff", "\xef\xbb\xbf"), "image/svg+xml"],
    ['<?xml version="1.0"?><svg/>', "image/svg+xml"],
  ])("%j → %s", (bytes, type) => {
    expect(sniffImageType(b64(bytes))).toBe(type);
  });

  test("unknown bytes, too few bytes, and text that is not base64 → undefined", () => {
    expect(sniffImageType(b64("hello world, not an image"))).toBeUndefined();
    expect(sniffImageType(b64("\x89P"))).toBeUndefined();
    expect(sniffImageType("not base64 at all!")).toBeUndefined();
  });
});

describe("dataUrlBase64", () => {
  test("base64 payload as it is; percent-encoded payload encoded as UTF-8; no type → octet-stream; not a data URL → undefined", () => {
    expect(dataUrlBase64("data:image/png;base64,iVBORw0KGgo=")).toEqual({ mimeType: "image/png", data: "iVBORw0KGgo=" });
    expect(dataUrlBase64("data:text/plain,h%C3%A9")).toEqual({ mimeType: "text/plain", data: btoa("h\xc3\xa9") });
    expect(dataUrlBase64("data:;base64,AAAA")).toEqual({ mimeType: "application/octet-stream", data: "AAAA" });
    expect(dataUrlBase64("https://example.com/a.png")).toBeUndefined();
    expect(dataUrlBase64("data:text/plain,%E0%A4%A")).toBeUndefined();
  });
});
