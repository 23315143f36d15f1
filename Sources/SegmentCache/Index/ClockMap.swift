/// A map bounded by the total cost of its values, evicting with CLOCK (second chance): a value read since the
/// hand last passed it survives one more round. The one bounded map of the server (the memory tier, rendered
/// playlists, the segment index, read-ahead's recent keys, the address-policy verdicts, the cache's open entries);
/// not thread-safe, kept
/// behind a `Mutex` by its owner.
///
/// *Model: golang/groupcache's `lru` package, one type wherever a bounded map is needed.*
///
/// Inlinable, so that each owner's module specializes it for its key and value: unspecialized, every lookup from the
/// server's modules went through the runtime's generic metadata (`bench/PROFILES.md`).
package struct ClockMap<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        var value: Value
        var cost: Int
        var referenced: Bool
    }

    @usableFromInline var slots: [Key: Slot] = [:]
    /// Keys in insertion order, from `hand` on; a key may appear more than once (a second chance re-queues it),
    /// and keys removed from `slots` are skipped when the hand reaches them.
    @usableFromInline var queue: [Key] = []
    @usableFromInline var hand = 0

    /// The bound on the total cost.
    package let capacity: Int
    /// The total cost of the values held.
    @usableFromInline package internal(set) var totalCost = 0

    /// - Parameter capacity: the bound on the total cost (a count when every cost is 1).
    @inlinable
    package init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many values are held.
    @inlinable
    package var count: Int { slots.count }

    /// The value for `key`, marked as used.
    @inlinable
    package mutating func value(forKey key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        if !slot.referenced { slots[key]?.referenced = true }
        return slot.value
    }

    /// Every value held, without marking any used.
    @inlinable
    package var values: [Value] { slots.values.map(\.value) }

    /// Whether `key` is held, without marking it used.
    @inlinable
    package func contains(_ key: Key) -> Bool { slots[key] != nil }

    /// The value for `key`, without marking it used.
    @inlinable
    package func peek(_ key: Key) -> Value? { slots[key]?.value }

    /// Stores `value` for `key` (replacing what was there) and evicts until the total cost is within the bound.
    /// - Returns: the values evicted or replaced, for owners that must release something with them.
    @discardableResult
    @inlinable
    package mutating func insert(_ value: Value, forKey key: Key, cost: Int = 1) -> [Value] {
        var removed: [Value] = []
        if let old = slots[key] {
            totalCost -= old.cost
            removed.append(old.value)
        } else {
            queue.append(key)
        }
        slots[key] = Slot(value: value, cost: cost, referenced: false)
        totalCost += cost
        while totalCost > capacity, hand < queue.count {
            let candidate = queue[hand]
            hand += 1
            guard let slot = slots[candidate] else { continue }
            if slot.referenced {
                slots[candidate]?.referenced = false
                queue.append(candidate)
            } else {
                slots[candidate] = nil
                totalCost -= slot.cost
                removed.append(slot.value)
            }
        }
        compact()
        return removed
    }

    /// Removes the value for `key`.
    /// - Returns: the value removed, if there was one.
    @discardableResult
    @inlinable
    package mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        totalCost -= slot.cost
        compact()
        return slot.value
    }

    /// Removes every value whose key matches.
    /// - Returns: how many were removed.
    @discardableResult
    @inlinable
    package mutating func removeAll(where matches: (Key) -> Bool) -> Int {
        let keys = slots.keys.filter(matches)
        for key in keys { removeValue(forKey: key) }
        return keys.count
    }

    /// Removes every value that matches.
    /// - Returns: how many were removed.
    @discardableResult
    @inlinable
    package mutating func removeAll(whereValue matches: (Value) -> Bool) -> Int {
        let keys = slots.compactMap { matches($0.value.value) ? $0.key : nil }
        for key in keys { removeValue(forKey: key) }
        return keys.count
    }

    /// Drops the queue's consumed front, and keys no longer held once they are most of it.
    @inlinable
    mutating func compact() {
        if hand > 1024, hand * 2 > queue.count {
            queue.removeFirst(hand)
            hand = 0
        }
        if queue.count > 4 * slots.count + 1024 {
            queue = queue[hand...].filter { slots[$0] != nil }
            hand = 0
        }
    }
}

extension ClockMap: Sendable where Key: Sendable, Value: Sendable {}

extension ClockMap.Slot: Sendable where Value: Sendable {}
