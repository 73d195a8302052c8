/** A JSON value: what crosses the sandbox wall and what the journal stores. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
