import type { z } from 'zod';

/** The shape of one route in the contract table (index.ts ROUTES): the source of the OpenAPI document and of tests. */

export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';

export interface ResponseContract {
  description: string;
  /** Media type → body schema; a schema of `null` means a body the contract does not model (XML, PDF, text). */
  content?: Record<string, z.ZodType | null>;
  headers?: Record<string, string>;
}

export interface RouteContract {
  method: HttpMethod;
  /** Express path syntax (`:param`). */
  path: string;
  summary: string;
  tags: string[];
  /** Bearer token required (true), none (false), or an httpsin hook's own credentials as HTTP Basic ('hookBasic'). */
  auth: boolean | 'hookBasic';
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  requestBody?: { description: string; content: Record<string, z.ZodType | null> };
  responses: Record<number, ResponseContract>;
}
