import TruceCommandLine

await CommandLineTool.main(registry: .standard)
