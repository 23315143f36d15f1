import HLSCacheCommands

// `hlscache`: the command line of ``HLSCacheCommand``, with its options also taken from `HLSCACHE_*` variables.
await HLSCacheCommand.runCommandLine()
