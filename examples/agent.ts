import { tools, sleep } from "rewind";

/** An agent loop: think repeatedly, each step raced against a timeout, until done. */
export default async function main(input: { goal: string }) {
  const notes: string[] = [];
  for (let step = 1; step <= 10; step++) {
    const answer = await Promise.race([
      tools.think({ step, notes }),
      sleep("2m").then(() => ({ done: false, thought: "timed out" })),
    ]);
    notes.push(answer.thought);
    console.log(`step ${step}: ${answer.thought}`);
    if (answer.done) break;
  }
  return { goal: input.goal, steps: notes.length, id: crypto.randomUUID() };
}
