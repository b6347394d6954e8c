/**
 * The random part of ids, drawn for many ids at once (issue 17, docs/performance.md items 129 and 144):
 * the request and route ids (pipeline/context.ts) and the ids the client encoders mint for a reply
 * (Responses `resp_`/`msg_`/… ids, Chat `chatcmpl-` ids, Gemini `responseId`s). Pure (no I/O): the
 * randomness is `crypto.getRandomValues`, as before.
 */

/** Ids whose random part one draw of the random pools serves ({@link RandomText}). */
const IDS_PER_DRAW = 256;

/**
 * The random part of ids, drawn for {@link IDS_PER_DRAW} ids at once: one `getRandomValues` into a kept
 * buffer and one encoding of all of it, then each id takes the next `chars` characters of that text
 * (a substring, no native call). An encoding of whole groups (a byte is 2 hex chars; 3 bytes are 4
 * base64url chars) makes each id's characters exactly the encoding of its own `bytes` bytes, so the ids
 * are as random and as unguessable as a draw per id; each piece of the text is handed out once. In the
 * running server the two draws and encodings per request cost ~5 µs of the JS thread (a CPU profile
 * under load, docs/performance.md item 129), against ~1 µs for the same work in a loop.
 */
export class RandomText {
  private text = "";
  private at = 0;
  private readonly pool: Buffer;

  /** `bytes` random bytes per id, encoded as `encoding` in `chars` characters. */
  constructor(
    bytes: number,
    private readonly chars: number,
    private readonly encoding: "hex" | "base64url",
  ) {
    this.pool = Buffer.alloc(bytes * IDS_PER_DRAW);
  }

  /** The next id's random characters. */
  next(): string {
    if (this.at >= this.text.length) {
      this.text = crypto.getRandomValues(this.pool).toString(this.encoding);
      this.at = 0;
    }
    const s = this.text.slice(this.at, this.at + this.chars);
    this.at += this.chars;
    return s;
  }
}

/** 4 random bytes per id part, as 8 hex characters. */
const ID_PART = new RandomText(4, 8, "hex");

/** A short random id part: 8 hex characters (32 bits), e.g. the per-reply part of minted call ids (codec.ts `DecoderOptions.callIdPart`). */
export function randomIdPart(): string {
  return ID_PART.next();
}

