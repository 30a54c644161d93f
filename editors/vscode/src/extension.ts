// The .cute extension: starts `cutec lsp` for .cute files and connects VS Code to it. Highlighting
// (syntaxes/cute.tmLanguage.json) and brackets/comments (language-configuration.json) need no server.

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration("cute").get<string>("server.path", "cutec");
  const server = { command, args: ["lsp"] };
  const serverOptions: ServerOptions = { run: server, debug: server };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: "cute" }],
  };
  client = new LanguageClient("cute", "cutec lsp", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("cute.restartServer", async () => {
      await client?.restart();
    }),
  );
  try {
    await client.start();
  } catch (error) {
    void vscode.window.showErrorMessage(
      `cute: cannot start \`${command} lsp\` (${String(error)}). Build cutec and put it on PATH, or set cute.server.path.`,
    );
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
