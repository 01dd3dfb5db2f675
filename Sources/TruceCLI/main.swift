import TruceCommandLine

CommandLineTool.main()
