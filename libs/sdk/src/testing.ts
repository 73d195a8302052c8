/**
 * `@rewind/sdk/testing`, as the contract names it: the testing helpers live in their own package,
 * `@rewind/testing`, so that the client installs without the sandbox and its native addon. This
 * subpath works where `@rewind/testing` is installed too (an optional peer dependency).
 */
export * from "@rewind/testing";
