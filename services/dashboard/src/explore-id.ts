/** The element an explore file embeds its data in; the page (web/src/data-source.ts) reads it. */
export const EMBEDDED_ELEMENT_ID = "rewind-data";
