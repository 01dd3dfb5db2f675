import AdopterKit
import Truce
import TruceCommandLine

// The app's own `truce`: every command, with the app's resolver beside the built-in ones.
await CommandLineTool.main(registry: .notes)
