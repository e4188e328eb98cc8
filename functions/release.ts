/** The release function: the shared HTTP chain (the route table says which routes it serves when deployed). */
import { createHttpHandler } from './http.ts';

export const handler = createHttpHandler();
