import TruceCommandLine

CommandLineTool.main(registry: .standard)
