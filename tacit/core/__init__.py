"""The core every layer stands on: errors, files, choices and run options, the manifest's
shared keys, metrics, where tacit keeps its files. Nothing here imports torch or any other
part of tacit."""
