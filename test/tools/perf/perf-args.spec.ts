import { parsePerfArgs, UsageError } from './perf-args';

const url = ['--url', 'http://127.0.0.1:8080'];

describe('perf command line', () => {
  it('fills the defaults around --url', () => {
    expect(parsePerfArgs(url)).toEqual({
      url: 'http://127.0.0.1:8080',
      scene: 'feed',
      candidates: 100,
      mode: 'concurrency',
      levels: [1],
      durationS: 10,
      warmupS: 2,
      features: 'models/demo/features.jsonl',
      randomIds: false,
      csv: undefined,
      svg: undefined,
      timeoutMs: 30000,
      topK: undefined,
      help: false,
    });
  });

  it('reads the documented example, in both spellings of a value', () => {
    const options = parsePerfArgs([
      '--url=http://host:8080/',
      '--scene',
      'feed',
      '--candidates',
      '3000',
      '--concurrency',
      '1,2, 4,8',
      '--duration=2.5',
      '--csv',
      'out.csv',
      '--svg',
      'out.svg',
    ]);
    expect(options).toMatchObject({
      url: 'http://host:8080',
      candidates: 3000,
      mode: 'concurrency',
      levels: [1, 2, 4, 8],
      durationS: 2.5,
      csv: 'out.csv',
      svg: 'out.svg',
    });
  });

  it('switches to the open loop with --rate, and to random ids', () => {
    const options = parsePerfArgs([
      ...url,
      '--rate',
      '50,100,200',
      '--random-ids',
      '--warmup',
      '0',
    ]);
    expect(options).toMatchObject({ mode: 'rate', levels: [50, 100, 200], warmupS: 0 });
    expect(options.randomIds).toBe(true);
    expect(options.features).toBeUndefined();
  });

  it.each([
    [[], '--url is required'],
    [[...url, '--bogus'], 'unknown option --bogus'],
    [[...url, 'extra'], 'unexpected argument "extra"'],
    [[...url, '--duration'], '--duration needs a value'],
    [[...url, '--duration', '--csv', 'x'], '--duration needs a value'],
    [[...url, '--duration', '0'], '--duration must be a number of seconds above 0'],
    [[...url, '--warmup', '-1'], '--warmup must be a number of seconds from 0'],
    [[...url, '--candidates', '1.5'], '--candidates must be an integer from 1 to 100000'],
    [[...url, '--candidates', '0'], '--candidates must be an integer'],
    [[...url, '--concurrency', '1,,2'], '--concurrency must be an integer'],
    [[...url, '--concurrency', '2,2'], '--concurrency lists a value twice'],
    [[...url, '--rate', '10', '--concurrency', '1'], 'give --concurrency or --rate, not both'],
    [[...url, '--features', 'f.jsonl', '--random-ids'], 'give --features or --random-ids'],
    [[...url, '--random-ids=yes'], '--random-ids takes no value'],
    [[...url, '--scene', 'a/b'], '--scene may only contain'],
    [['--url', 'localhost:8080'], '--url must be an http:// URL'],
    [['--url', 'https://host'], '--url must be an http:// URL'],
    [[...url, ...url], '--url given twice'],
  ])('rejects %j: %s', (argv, message) => {
    expect(() => parsePerfArgs(argv)).toThrow(UsageError);
    expect(() => parsePerfArgs(argv)).toThrow(message);
  });

  it('answers --help without asking for anything else', () => {
    expect(parsePerfArgs(['--help']).help).toBe(true);
  });
});
