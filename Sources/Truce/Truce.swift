@_exported import TruceCore
