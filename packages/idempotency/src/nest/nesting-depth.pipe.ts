import { BadRequestException, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';

/** Deeper than any DTO nests, far shallower than the recursion that overflows the stack. */
const DEFAULT_MAX_DEPTH = 32;

/**
 * Refuse a request body (or query) nested deeper than `maxDepth` levels
 * with 400, before the pipes after it see it. `ValidationPipe` (through
 * class-transformer and class-validator) walks a body recursively, so a
 * JSON body small enough for any body limit but nested some thousands of
 * levels deep (`[[[[…]]]]`) overflows the stack there: a `RangeError`, a
 * 500 and an error log on every such request. This pipe measures the depth
 * without recursion and answers a client error instead. Adapter-neutral
 * (Fastify and Express); register it ahead of `ValidationPipe`, since
 * global pipes run in the order given.
 *
 * The depth counts objects and arrays: `{}` is 1, `{"a":[1]}` is 2.
 * Other arguments (params, custom decorators) are passed through unread.
 *
 * @example
 * app.useGlobalPipes(new NestingDepthPipe(), new ValidationPipe({ whitelist: true, transform: true }));
 *
 * @public
 */
@Injectable()
export class NestingDepthPipe implements PipeTransform {
  /** @param maxDepth - The deepest nesting accepted. Default 32. */
  constructor(private readonly maxDepth = DEFAULT_MAX_DEPTH) {
    if (!Number.isInteger(maxDepth) || maxDepth < 1) throw new RangeError(`maxDepth must be a positive integer, got ${maxDepth}`);
  }

  /** Pass `value` through, or throw 400 when it is a body or query nested deeper than `maxDepth`. */
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if ((metadata.type === 'body' || metadata.type === 'query') && nestedDeeper(value, this.maxDepth)) {
      throw new BadRequestException(`The request ${metadata.type} is nested deeper than ${this.maxDepth} levels`);
    }
    return value;
  }
}

/**
 * Whether `value` nests objects or arrays more than `maxDepth` deep. It walks
 * depth first with one frame per level of the current path, never recursion:
 * any depth is measured, and the memory it takes grows with the depth walked
 * (at most `maxDepth` frames), not with the size of a large flat body.
 */
function nestedDeeper(value: unknown, maxDepth: number): boolean {
  if (!isNode(value)) return false;
  const path: Array<Iterator<unknown>> = [children(value)];
  while (path.length > 0) {
    const next = path[path.length - 1]!.next();
    if (next.done) path.pop();
    else if (isNode(next.value)) {
      if (path.length >= maxDepth) return true;
      path.push(children(next.value));
    }
  }
  return false;
}

const isNode = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** A node's own enumerable values, one at a time; a Buffer or a typed array (a raw body) holds numbers, never nesting. */
function* children(node: object): Generator<unknown> {
  if (ArrayBuffer.isView(node)) return;
  for (const key in node) if (Object.hasOwn(node, key)) yield (node as Record<string, unknown>)[key];
}
