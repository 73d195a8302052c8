import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, lineLog, prettyLine, runFields } from "./logger.js";
import { traceIdOf } from "./trace-id.js";

function capture(isTTY = false) {
  const lines: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        done();
      },
    }),
    { isTTY },
  );
  return { stream, lines };
}

describe("service logs", () => {
  it("are one JSON object a line, with the service, and a run's id, seq and trace id", async () => {
    const { stream, lines } = capture();
    const logger = createLogger("worker", { destination: stream });
    logger.warn(runFields("run_1", 7), "activation failed, retrying");
    lineLog(logger)("worker ready: toolsets shop");
    await new Promise((resolve) => setImmediate(resolve));
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({
      level: 40,
      service: "worker",
      runId: "run_1",
      seq: 7,
      traceId: traceIdOf("run_1"),
      msg: "activation failed, retrying",
    });
    expect(typeof first!.time).toBe("number");
    expect(second).toMatchObject({
      level: 30,
      service: "worker",
      msg: "worker ready: toolsets shop",
    });
  });

  it("are short readable lines in a terminal (and with REWIND_LOG_FORMAT=pretty)", async () => {
    const { stream, lines } = capture(true);
    createLogger("dev", { destination: stream, format: "pretty" }).info(
      runFields("run_2", 3),
      "run resumed",
    );
    await new Promise((resolve) => setImmediate(resolve));
    const plain = lines[0]!.replace(/\x1b\[\d+m/g, "");
    expect(plain).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} info  dev run resumed runId=run_2 seq=3 traceId=${traceIdOf("run_2")}$`,
      ),
    );
    expect(lines[0]).toContain("\x1b["); // coloured on a terminal
    expect(prettyLine("not json", false)).toBe("not json");
  });

  it("say what an error was, its stack included", async () => {
    const { stream, lines } = capture();
    createLogger("api", { destination: stream }).error(
      { err: new Error("store down") },
      "request failed",
    );
    await new Promise((resolve) => setImmediate(resolve));
    const record = JSON.parse(lines[0]!) as {
      err: { message: string; stack: string };
      level: number;
    };
    expect(record.level).toBe(50);
    expect(record.err.message).toBe("store down");
    expect(record.err.stack).toContain("logger.test.ts");
  });
});
