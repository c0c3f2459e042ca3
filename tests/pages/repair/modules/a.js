log.push('a');
export const a = 1;
