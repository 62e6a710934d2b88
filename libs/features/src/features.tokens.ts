/** The Redis client of the features lib (null with the in-memory store). */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
