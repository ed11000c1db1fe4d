// Command-line and statistics helpers shared by the node bench scripts.

// The value after `name` in args, or fallback when name is absent.
export function option(args, name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
}

// Every value that follows an occurrence of `name` (a repeated option such as --input).
export function options(args, name) {
  const values = [];
  args.forEach((a, i) => { if (a === name && i + 1 < args.length) values.push(args[i + 1]); });
  return values;
}

// option(), and removes the pair from args, so that what remains are the positional arguments.
export function takeOption(args, name, fallback) {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
}

// The median of a list of numbers (the mean of the middle two for an even count): the statistic
// every bench reports, since single timings on a shared machine are noisy.
export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}
