/**
 * English indefinite article for a noun in a message: `An image`, `A document`, `An audio`. By the
 * noun's first letter (a vowel takes "An"), enough for the part and block types the formats name.
 * `capital`: sentence-initial "A"/"An" (default), else "a"/"an".
 */
export function withArticle(noun: string, capital = true): string {
  const an = /^[aeiou]/i.test(noun);
  return `${capital ? (an ? "An" : "A") : an ? "an" : "a"} ${noun}`;
}
