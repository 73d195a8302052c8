import { ObjectDefineProperty, OriginalPromise, ReflectApply } from "../intrinsics.js";
import { markNative, replaceMethod } from "./natives.js";

const PAGE_BYTES = 65536;

/** The part of the WebAssembly namespace used here (the guest's lib has no DOM or wasm types). */
type Constructor = new (...args: unknown[]) => object;
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(delta: number): number;
}
interface MemoryDescriptor {
  initial?: unknown;
  maximum?: unknown;
  shared?: unknown;
}
interface WasmNamespace {
  Memory: Constructor & { prototype: WasmMemory };
  Module: Constructor;
  Instance: Constructor;
  CompileError: new (message: string) => Error;
}

/**
 * WebAssembly inside the sandbox, with three limits of the standard-JavaScript epochs:
 *
 * - No shared memory: a `shared` WebAssembly.Memory's buffer is a SharedArrayBuffer, which the
 *   sandbox removed (a second agent could observe timing through it). Such a Memory, and a module
 *   that declares or imports one, is refused at the door.
 * - A memory may not outgrow the run: its maximum (and a module memory's initial size) is capped
 *   at the isolate's memory limit, and `grow` past it throws a RangeError. (The host counts the
 *   memory wasm really allocates against the run for every epoch.)
 * - The asynchronous `compile` and `instantiate` settle: isolated-vm runs no background compile
 *   tasks, so the engine's own promises would never settle; here they compile synchronously
 *   (under the activation's CPU limit) and resolve, or reject with the compile error.
 */
export function installWebAssembly(global: typeof globalThis, memoryLimitMb: number): void {
  const wasm = (global as { WebAssembly?: WasmNamespace }).WebAssembly;
  if (wasm === undefined) return;
  const maxPages = Math.max(1, Math.floor((memoryLimitMb * 1024 * 1024) / PAGE_BYTES));
  const OriginalMemory = wasm.Memory;
  const OriginalModule = wasm.Module;
  const OriginalInstance = wasm.Instance;
  const bufferOf = Reflect.getOwnPropertyDescriptor(OriginalMemory.prototype, "buffer")!.get as (
    this: unknown,
  ) => ArrayBuffer;
  const grow = OriginalMemory.prototype.grow;

  const Memory = new Proxy(OriginalMemory, {
    construct(target, args, newTarget) {
      const descriptor = args[0] as MemoryDescriptor | undefined;
      if (typeof descriptor !== "object" || descriptor === null)
        return Reflect.construct(target, args, newTarget) as object;
      if (descriptor.shared)
        throw new TypeError(
          "Shared WebAssembly memory is not available in Rewind's sandbox (it would be a " +
            "SharedArrayBuffer, which is removed): create the Memory without `shared`",
        );
      const initial = Number(descriptor.initial);
      const maximum = descriptor.maximum === undefined ? maxPages : Number(descriptor.maximum);
      if (initial > maxPages || maximum > maxPages)
        throw new RangeError(
          `A WebAssembly.Memory may have at most ${maxPages} pages (the run's memory limit of ` +
            `${memoryLimitMb} MiB), this one asks for ${Math.max(initial, maximum)}: use less memory`,
        );
      const capped = { initial: descriptor.initial, maximum };
      return Reflect.construct(target, [capped], newTarget) as object;
    },
  });
  markNative(Memory, "Memory");
  replaceMethod(
    OriginalMemory.prototype,
    "grow",
    {
      grow(this: unknown, delta: unknown) {
        const pages = ReflectApply(bufferOf, this, []).byteLength / PAGE_BYTES;
        if (pages + Number(delta) > maxPages)
          throw new RangeError(
            `WebAssembly.Memory.grow(${Number(delta)}) would take the memory to ${pages + Number(delta)} ` +
              `pages, past the run's limit of ${maxPages} (${memoryLimitMb} MiB)`,
          );
        return ReflectApply(grow, this, [delta as number]);
      },
    }.grow,
  );

  const checked = (bytes: unknown): void => {
    const problem = memoryProblem(bytes, maxPages);
    if (problem !== undefined) throw new wasm.CompileError(problem);
  };
  const Module = new Proxy(OriginalModule, {
    construct(target, args, newTarget) {
      checked(args[0]);
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
  markNative(Module, "Module");
  ObjectDefineProperty(OriginalMemory.prototype, "constructor", {
    value: Memory,
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(OriginalModule.prototype, "constructor", {
    value: Module,
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(wasm, "Memory", { value: Memory, writable: true, configurable: true });
  ObjectDefineProperty(wasm, "Module", { value: Module, writable: true, configurable: true });

  const settle = <T>(compute: () => T): Promise<T> =>
    new OriginalPromise<T>((resolve) => resolve(compute()));
  replaceMethod(
    wasm,
    "compile",
    {
      compile(bytes: unknown) {
        return settle(() => Reflect.construct(Module, [bytes]));
      },
    }.compile,
  );
  replaceMethod(
    wasm,
    "instantiate",
    {
      instantiate(source: unknown, imports?: unknown) {
        return settle<object>(() => {
          if (source instanceof OriginalModule)
            return Reflect.construct(OriginalInstance, [source, imports]);
          const module = Reflect.construct(Module, [source]);
          const instance = Reflect.construct(OriginalInstance, [module, imports]);
          return { module, instance };
        });
      },
    }.instantiate,
  );
  // Streaming needs a Response, which the sandbox has not: absent rather than never settling.
  for (const name of ["compileStreaming", "instantiateStreaming"])
    Reflect.deleteProperty(wasm, name);
}

/** Bytes of a module, or undefined when `source` is not a buffer (the engine then says why). */
function bytesOf(source: unknown): Uint8Array | undefined {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source))
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  return undefined;
}

/**
 * Why a module's memories are refused (shared, or larger at the start than the run may be),
 * read from its memory and import sections; undefined when they are fine or the bytes are not a
 * module the engine would accept (it then rejects them with its own error).
 */
function memoryProblem(source: unknown, maxPages: number): string | undefined {
  const bytes = bytesOf(source);
  if (bytes === undefined) return undefined;
  let at = 8; // magic and version
  const byte = () => {
    if (at >= bytes.length) throw new RangeError("truncated");
    return bytes[at++]!;
  };
  const leb = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = byte();
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return value;
      scale *= 128;
    }
  };
  const skipName = () => {
    const length = leb();
    at += length;
  };
  const limits = (): string | undefined => {
    const flags = byte();
    const initial = leb();
    if ((flags & 1) !== 0) leb();
    if ((flags & 2) !== 0)
      return "The module uses shared memory, which Rewind's sandbox does not have (it would be a SharedArrayBuffer): build it without threads";
    if (initial > maxPages)
      return `The module's memory starts at ${initial} pages, more than the run's limit of ${maxPages}: use less memory`;
    return undefined;
  };
  try {
    while (at < bytes.length) {
      const id = byte();
      const size = leb();
      const end = at + size;
      if (id === 5) {
        for (let n = leb(); n > 0; n--) {
          const problem = limits();
          if (problem !== undefined) return problem;
        }
      } else if (id === 2) {
        for (let n = leb(); n > 0; n--) {
          skipName();
          skipName();
          const kind = byte();
          if (kind === 0x00)
            leb(); // function: type index
          else if (kind === 0x01) {
            byte(); // table: element type, then limits
            const flags = byte();
            leb();
            if ((flags & 1) !== 0) leb();
          } else if (kind === 0x02) {
            const problem = limits();
            if (problem !== undefined) return problem;
          } else if (kind === 0x03)
            at += 2; // global: value type, mutability
          else if (kind === 0x04) {
            byte(); // tag: attribute, then type index
            leb();
          } else return undefined; // an import this reader does not know: the engine judges
        }
      }
      at = end;
    }
  } catch {
    return undefined; // malformed: the engine rejects it with its own error
  }
  return undefined;
}
