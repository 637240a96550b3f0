import Foundation
import PosternCLI

exit(PosternCLI.main(Array(CommandLine.arguments.dropFirst())))
