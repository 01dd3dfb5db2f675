// swift-tools-version:6.0
import PackageDescription

// An adopter's package, written against Truce 0.1.0 (02ac588^) as apps wrote it then and left so: `make test` builds
// it against this checkout and runs its tests, so a release that breaks such code fails there (see README.md).
//
// The checkout is three folders up. SwiftPM names a package given by path after its folder, so that folder's name is
// read here rather than written down: the checkout may be called anything.
let checkout = "../../.."
let checkoutName = String(Context.packageDirectory.split(separator: "/").dropLast(3).last ?? "truce")

let package = Package(
    name: "Adopter",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: checkout)],
    targets: [
        // The app's use of Truce: its own resolver, routing, events, sync, conflict points and answers.
        .target(
            name: "AdopterKit",
            dependencies: [
                .product(name: "Truce", package: checkoutName),
                .product(name: "TruceCommandLine", package: checkoutName),
            ]
        ),
        // The app's own `truce`: the command line as a library, with the app's resolver.
        .executableTarget(
            name: "adopter-truce",
            dependencies: ["AdopterKit", .product(name: "TruceCommandLine", package: checkoutName)]
        ),
        .testTarget(
            name: "AdopterKitTests",
            dependencies: [
                "AdopterKit",
                .product(name: "Truce", package: checkoutName),
                .product(name: "TruceCommandLine", package: checkoutName),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
