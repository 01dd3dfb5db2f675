// Every test that imports TestSupport sees the testbed too: its workloads, processes and real servers.
@_exported import Testbed
