import Foundation
internal import TruceCrypto
internal import TruceGit

/// Reading an encrypted hub: every new entry of every replica's chain checked, in order, then opened into the cache.
extension EncryptedHubCache {
    /// What was read of one slot: its last entry opened, and what the next must follow.
    struct SlotState {
        let commit: ObjectID
        let sequence: UInt64
        let digest: [UInt8]
        let signer: [UInt8]
    }

    /// The slot (32 hex digits) that holds `replica`'s chain: a digest keyed by the hub's first key, so the hub never
    /// learns replica ids, and a replica's entries cannot be passed off as another's.
    static func slot(of replica: String, keys: [UInt32: SymmetricKey]) -> String? {
        guard let first = keys[1] else { return nil }
        return hex(Array(Digest.blake2b(Array(replica.utf8), key: first.subkey(1, purpose: "hubslots")).prefix(16)))
    }

    static func isSlot(_ name: Substring) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The slots an entry of was read here.
    func openedSlots() throws -> [String] {
        try repository.references(under: Self.openedRoot).map { String($0.name.dropFirst(Self.openedRoot.count)) }
    }

    /// What was read of `slot`: read from its last entry opened the first time it is asked for, then kept as
    /// `openChain` moves it (an entry's dependencies and the next seal ask for every slot's).
    func state(ofSlot slot: String) throws -> SlotState? {
        if let known = openedStates[slot] { return known }
        var state: SlotState?
        if let commit = try repository.reference(Self.openedRoot + slot) {
            let bytes = try indexBytes(of: commit)
            let header = try SealedEntry.header(ofIndex: bytes)
            state = SlotState(commit: commit, sequence: header.sequence, digest: Digest.blake2b(bytes), signer: header.signer)
        }
        openedStates[slot] = .some(state)
        return state
    }

    private func indexBytes(of commit: ObjectID) throws -> [UInt8] {
        let record = try repository.readCommit(commit)
        guard let index = try repository.entry(at: SealedEntry.indexName, inTree: record.tree), !index.isTree else {
            throw HubFormatError("its entry \(commit.short) holds no index")
        }
        return [UInt8](try repository.readBlob(index.id))
    }

    /// Checks and opens every new entry the hub's `advertised` references reach, this replica's own included (those a
    /// sync killed after sealing left here); refuses, naming the replica, a chain the hub cut, rolled back, reordered,
    /// altered or moved, and a hub that withholds entries another replica had read.
    ///
    /// `device` is this store's signing key: a chain of this replica's on the hub that this cache does not know (the
    /// cache was lost) is taken back when that key signed it.
    func openNewEntries(advertised: [String: ObjectID], ring: HubKeyRing, keys: [UInt32: SymmetricKey], ownSlot: String, device: [UInt8]) throws {
        var seen: [String: (sequence: UInt64, by: String)] = [:]
        var slots = Set<String>()
        for (name, tip) in advertised.sorted(by: { $0.key < $1.key }) where name.hasPrefix(Self.replicasRoot) {
            let slot = name.dropFirst(Self.replicasRoot.count)
            guard Self.isSlot(slot) else { throw failure("it holds \(name), which Truce does not write") }
            slots.insert(String(slot))
            guard slot != ownSlot else { continue }
            try openChain(String(slot), to: tip, ring: ring, keys: keys, seen: &seen, advertised: advertised)
        }
        try checkOwnChain(hubTip: advertised[Self.replicasRoot + ownSlot], slot: ownSlot, device: device)
        if let local = try repository.reference(Self.ownChainRoot + ownSlot) {
            try openChain(ownSlot, to: local, ring: ring, keys: keys, seen: &seen, advertised: advertised)
        }
        for slot in try openedSlots() {
            guard slot != ownSlot, !slots.contains(slot) else { continue }
            throw failure("it withholds replica \(try replicaName(ofSlot: slot, keys: keys)): its entries were read here before")
        }
        for (slot, seenThere) in seen {
            let here = try state(ofSlot: slot)?.sequence ?? 0
            if here < seenThere.sequence, ring.frozen[slot].map({ here < $0 }) ?? true {
                throw failure(
                    "it withholds entries of replica \(try replicaName(ofSlot: slot, keys: keys)): replica \(seenThere.by) read up to \(seenThere.sequence), the hub gives \(here)"
                )
            }
        }
    }

    /// The replica id whose chain fills `slot`, read from its last entry opened here; the slot itself when none was.
    func replicaName(ofSlot slot: String, keys: [UInt32: SymmetricKey]) throws -> String {
        guard let state = try state(ofSlot: slot) else { return "in slot \(slot)" }
        let bytes = try indexBytes(of: state.commit)
        guard let key = keys[try SealedEntry.header(ofIndex: bytes).epoch], let entry = try? SealedEntry.open(index: bytes, with: key) else {
            return "in slot \(slot)"
        }
        return entry.replica
    }

    /// This replica's chain on the hub against the one written here: behind it (a push to finish) or equal; never
    /// behind what the hub took before, nor another chain.
    private func checkOwnChain(hubTip: ObjectID?, slot: String, device: [UInt8]) throws {
        var local = try repository.reference(Self.ownChainRoot + slot)
        var acknowledged = try repository.reference(Self.acknowledgedRoot + slot)
        if local == nil, let hubTip, (try? SealedEntry.header(ofIndex: indexBytes(of: hubTip)).signer) == device {
            // This store wrote it, and its cache is new (the old one was lost): taken back as it stands, and opened below
            // entry by entry like any chain. What the lost cache remembered of the hub is gone with it.
            try move(Self.ownChainRoot + slot, to: hubTip)
            try move(Self.acknowledgedRoot + slot, to: hubTip)
            (local, acknowledged) = (hubTip, hubTip)
        }
        guard let hubTip else {
            if acknowledged != nil { throw failure("it withholds this replica's own entries, which it took before") }
            return
        }
        guard let local, try hubTip == local || repository.isDescendant(local, of: hubTip) else {
            throw failure("it holds entries of this replica that this store did not write")
        }
        if let acknowledged, acknowledged != hubTip, try !repository.isDescendant(hubTip, of: acknowledged) {
            throw failure("it rolled this replica's own entries back to an older state")
        }
    }

    /// Opens the entries of `slot` from the one after the last opened here to `tip`, oldest first, each once checked.
    ///
    /// An entry may carry objects that need those of entries of other replicas it had read (`SealedEntry.seen`): those
    /// chains are opened first, from `advertised`, and a hub that does not give them is withholding them.
    func openChain(
        _ slot: String, to tip: ObjectID, ring: HubKeyRing, keys: [UInt32: SymmetricKey], seen: inout [String: (sequence: UInt64, by: String)],
        advertised: [String: ObjectID], opening: Set<String> = [], through: UInt64? = nil
    ) throws {
        var last = try state(ofSlot: slot)
        guard last?.commit != tip else { return }
        if let last, try !repository.isDescendant(tip, of: last.commit) {
            throw failure(
                "it rolled back or replaced replica \(try replicaName(ofSlot: slot, keys: keys)): its entries no longer follow entry \(last.sequence) read here"
            )
        }
        for commit in try repository.walk(from: [tip], hiding: last.map { [$0.commit] } ?? [], oldestFirst: true) {
            do {
                let record = try repository.readCommit(commit)
                guard record.parents == (last.map { [$0.commit] } ?? []) else { throw HubFormatError("its entries are not one chain") }
                let bytes = try indexBytes(of: commit)
                let header = try SealedEntry.header(ofIndex: bytes)
                guard header.slot == slot else {
                    throw failure(
                        "replica \(try replicaName(ofSlot: header.slot, keys: keys)): its entry \(header.sequence) stands in slot \(slot), not its own; nothing of it was adopted"
                    )
                }
                guard header.sequence == (last?.sequence ?? 0) + 1 else {
                    throw HubFormatError("entry \(header.sequence) stands where entry \((last?.sequence ?? 0) + 1) belongs (replayed or reordered)")
                }
                // A revoked device's replica ends where the revocation froze it: what it wrote after is not read.
                if let frozen = ring.frozen[slot], header.sequence > frozen { return }
                // Opened as far as an entry of another replica needs: the rest comes in its own turn.
                if let through, header.sequence > through { return }
                guard ring.mayWrite(header.signer, epoch: header.epoch) else {
                    throw HubFormatError("entry \(header.sequence) is signed by \(DeviceKeys.fingerprint(of: header.signer)), which may not write it")
                }
                if let last, last.signer != header.signer {
                    throw HubFormatError("entry \(header.sequence) is signed by another device than the entries before")
                }
                guard let key = keys[header.epoch] else {
                    throw HubFormatError("this device holds no key of epoch \(header.epoch): it was revoked, or not approved for it")
                }
                let entry = try SealedEntry.open(index: bytes, with: key)
                guard entry.previous == (last?.digest ?? [UInt8](repeating: 0, count: Digest.count)) else {
                    throw HubFormatError("entry \(header.sequence) does not follow the entry before it")
                }
                guard Self.slot(of: entry.replica, keys: keys) == slot, ReplicaManifest.isReplicaID(entry.replica) else {
                    throw HubFormatError("entry \(header.sequence) belongs to another replica's chain (swapped)")
                }
                for (other, sequence) in entry.seen.sorted(by: { $0.key < $1.key }) where other != slot {
                    if try (state(ofSlot: other)?.sequence ?? 0) < sequence, !opening.contains(other),
                        let otherTip = advertised[Self.replicasRoot + other]
                    {
                        try openChain(
                            other, to: otherTip, ring: ring, keys: keys, seen: &seen, advertised: advertised, opening: opening.union([slot]),
                            through: sequence)
                    }
                    let here = try state(ofSlot: other)?.sequence ?? 0
                    if here < sequence, ring.frozen[other].map({ here < $0 }) ?? true {
                        throw failure(
                            "it withholds entries of replica \(try replicaName(ofSlot: other, keys: keys)): replica \(entry.replica) read up to \(sequence), the hub gives \(here)"
                        )
                    }
                }
                let tree = try repository.readTree(record.tree)
                guard Set(tree.map(\.name)) == Set([SealedEntry.indexName] + entry.parts.indices.map(SealedEntry.partName)) else {
                    throw HubFormatError("entry \(header.sequence) holds other parts than its index lists")
                }
                for index in entry.parts.indices {
                    let part = tree.first { $0.name == SealedEntry.partName(index) }!
                    try repository.indexPack(try entry.openPart([UInt8](try repository.readBlob(part.id)), index: index, with: key))
                }
                if let manifest = entry.manifest {
                    guard try repository.containsCommit(manifest) else {
                        throw HubFormatError("entry \(header.sequence) names a manifest it does not carry")
                    }
                    try move(ReplicaManifest.reference(of: entry.replica), to: manifest)
                }
                for (other, sequence) in entry.seen where sequence > seen[other]?.sequence ?? 0 { seen[other] = (sequence, entry.replica) }
                try move(Self.openedRoot + slot, to: commit)
                last = SlotState(commit: commit, sequence: header.sequence, digest: Digest.blake2b(bytes), signer: header.signer)
                openedStates[slot] = .some(last)
            } catch let error as HubFormatError {
                // Named by the last entry opened here: only a failure pays for opening it again.
                throw failure("replica \(try replicaName(ofSlot: slot, keys: keys)): \(error.reason); nothing of it was adopted")
            }
        }
    }
}
